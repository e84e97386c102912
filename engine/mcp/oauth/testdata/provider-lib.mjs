// Test-only: builds oidc-provider (a certified OpenID provider, pinned in
// npm/package.json) configured the way MCP authorization needs an
// authorization server to be, for provider.mjs (engine/mcp/oauth's tests)
// and for the protected MCP server of engine/mcp/connect/protectedtest:
//   - resource indicators (RFC 8707) with one resource (the MCP server's
//     URL) as the only one, its access tokens issued for that audience, as
//     JWTs or as opaque tokens (which the resource checks by introspection);
//   - PKCE required (S256), for every client;
//   - refresh tokens for every client allowed the refresh_token grant;
//   - open dynamic client registration (RFC 7591), revocation (RFC 7009),
//     introspection (RFC 7662), client credentials;
//   - RFC 9207 iss in authorization responses (oidc-provider's default).
// Logging in and consenting is automatic: GET /interaction/:uid logs in
// the account accountOf names and grants every requested scope, so a test
// can follow the authorization URL with a cookie jar to the redirect.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// importProvider loads oidc-provider from the node_modules folder modules
// (an ES module is not found through NODE_PATH, so it is imported by its
// path).
export async function importProvider(modules) {
  return import(pathToFileURL(join(modules, 'oidc-provider', 'lib', 'index.js')).href);
}

// createProvider builds the provider. Options:
//   modules:           the node_modules folder holding oidc-provider;
//   issuer:            the issuer, http://127.0.0.1:PORT;
//   resource:          the only resource indicator (the MCP server's URL);
//   resourceScopes:    its scopes, space separated (default "mcp:read mcp:write");
//   accessTokenTTL:    the access tokens' lifetime in seconds (default 3600);
//   accessTokenFormat: "jwt" (default, RS256) or "opaque";
//   clients:           pre-registered clients;
//   accountOf:         (interaction details) => the account that logs in
//                      (default: always "test-user");
//   introspectionAllowed: (ctx, client, token) => boolean, who may
//                      introspect what (default: oidc-provider's).
// It returns the provider, not yet listening.
export async function createProvider(o) {
  const { default: Provider, errors } = await importProvider(o.modules);
  const resourceScopes = o.resourceScopes || 'mcp:read mcp:write';
  const accessTokenTTL = o.accessTokenTTL || 3600;
  const accessTokenFormat = o.accessTokenFormat || 'jwt';
  const accountOf = o.accountOf || (() => 'test-user');
  const introspection = { enabled: true };
  if (o.introspectionAllowed) {
    introspection.allowedPolicy = o.introspectionAllowed;
  }

  const provider = new Provider(o.issuer, {
    clients: o.clients || [],
    scopes: ['openid', 'offline_access'],
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      introspection,
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => o.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== o.resource) {
            throw new errors.InvalidTarget();
          }
          const info = { scope: resourceScopes, audience: o.resource, accessTokenTTL, accessTokenFormat };
          if (accessTokenFormat === 'jwt') {
            info.jwt = { sign: { alg: 'RS256' } };
          }
          return info;
        },
      },
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  });
  provider.proxy = false;

  // The automatic login and consent.
  provider.use(async (ctx, next) => {
    const m = /^\/interaction\/([^/]+)$/.exec(ctx.path);
    if (!m || ctx.method !== 'GET') {
      return next();
    }
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    let result;
    if (details.prompt.name === 'login') {
      result = { login: { accountId: accountOf(details) } };
    } else {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
      const missing = details.prompt.details;
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
      if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
      for (const [ind, scopes] of Object.entries(missing.missingResourceScopes || {})) {
        grant.addResourceScope(ind, scopes.join(' '));
      }
      result = { consent: { grantId: await grant.save() } };
    }
    const to = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true });
    ctx.status = 303;
    ctx.redirect(to);
  });
  return provider;
}
