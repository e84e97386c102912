// Test-only authorization server for engine/mcp/oauth: oidc-provider (a
// certified OpenID provider, pinned in npm/package.json) on 127.0.0.1:PORT,
// configured the way MCP authorization needs an AS to be:
//   - resource indicators (RFC 8707) with RESOURCE (the MCP server's URL) as
//     the only resource, its access tokens JWTs with that audience;
//   - PKCE required (S256), for every client;
//   - refresh tokens for every client allowed the refresh_token grant;
//   - open dynamic client registration (RFC 7591), revocation (RFC 7009),
//     client credentials for the pre-registered client "service";
//   - private_key_jwt (RFC 7523) for the clients "service-jwt" (client
//     credentials) and "preregistered-jwt" (code flow), whose public keys
//     the test passes in CLIENT_JWKS ({"<client id>": {"keys": [JWK]}});
//   - RFC 9207 iss in authorization responses (oidc-provider's default).
// Logging in and consenting is automatic: /interaction/:uid logs in the
// fixed account ACCOUNT (default "test-user") and grants every requested
// scope, so a test can follow the authorization URL with a cookie jar to the
// redirect and read the code. It prints "ready" once it listens.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

// NODE_MODULES is the folder oidc-provider is installed in (an ES module
// is not found through NODE_PATH, so it is imported by its path).
const modules = process.env.NODE_MODULES || new URL('./npm/node_modules', import.meta.url).pathname;
const { default: Provider, errors } = await import(pathToFileURL(join(modules, 'oidc-provider', 'lib', 'index.js')).href);

const port = Number(process.env.PORT);
const resource = process.env.RESOURCE;
const account = process.env.ACCOUNT || 'test-user';
if (!port || !resource) {
  console.error('PORT and RESOURCE are required');
  process.exit(2);
}
const issuer = `http://127.0.0.1:${port}`;
const resourceScopes = 'mcp:read mcp:write';
const jwks = JSON.parse(process.env.CLIENT_JWKS || '{}');
const redirectURI = process.env.REDIRECT_URI || 'http://127.0.0.1:1/callback';
// The private_key_jwt clients, when the test gave their keys.
const jwtClients = [
  {
    client_id: 'service-jwt',
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
  },
  {
    client_id: 'preregistered-jwt',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [redirectURI],
  },
].filter((c) => jwks[c.client_id]).map((c) => ({ ...c, token_endpoint_auth_method: 'private_key_jwt', jwks: jwks[c.client_id] }));

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: 'service',
      client_secret: 'service-secret-not-a-real-one',
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_post',
    },
    {
      client_id: 'preregistered',
      client_secret: 'preregistered-secret-not-a-real-one',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      redirect_uris: [redirectURI],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    ...jwtClients,
  ],
  scopes: ['openid', 'offline_access'],
  pkce: { required: () => true },
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  findAccount: async (_ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    revocation: { enabled: true },
    introspection: { enabled: true },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, indicator) => {
        if (indicator !== resource) {
          throw new errors.InvalidTarget();
        }
        return {
          scope: resourceScopes,
          audience: resource,
          accessTokenTTL: 3600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
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
    result = { login: { accountId: account } };
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

provider.listen(port, '127.0.0.1', () => {
  console.log('ready');
});
