// Test-only authorization server for engine/mcp/oauth: oidc-provider (a
// certified OpenID provider, pinned in npm/package.json) on 127.0.0.1:PORT,
// configured by provider-lib.mjs the way MCP authorization needs an AS to
// be, with RESOURCE (the MCP server's URL) as the only resource and its
// access tokens JWTs with that audience, and two pre-registered clients:
// "service" (client credentials) and "preregistered" (the code flow to
// REDIRECT_URI), and, when the test gives their public keys in CLIENT_JWKS
// ({"<client id>": {"keys": [JWK]}}), two private_key_jwt (RFC 7523)
// clients: "service-jwt" (client credentials) and "preregistered-jwt" (the
// code flow). Logging in and consenting is automatic, as the fixed
// account ACCOUNT (default "test-user"), so a test can follow the
// authorization URL with a cookie jar to the redirect and read the code.
// It prints "ready" once it listens.
import { createProvider } from './provider-lib.mjs';

// NODE_MODULES is the folder oidc-provider is installed in.
const modules = process.env.NODE_MODULES || new URL('./npm/node_modules', import.meta.url).pathname;
const port = Number(process.env.PORT);
const resource = process.env.RESOURCE;
const account = process.env.ACCOUNT || 'test-user';
if (!port || !resource) {
  console.error('PORT and RESOURCE are required');
  process.exit(2);
}

const redirectURI = process.env.REDIRECT_URI || 'http://127.0.0.1:1/callback';
const jwks = JSON.parse(process.env.CLIENT_JWKS || '{}');
// The private_key_jwt clients, when the test gave their keys.
const jwtClients = [
  { client_id: 'service-jwt', grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
  { client_id: 'preregistered-jwt', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], redirect_uris: [redirectURI] },
].filter((c) => jwks[c.client_id]).map((c) => ({ ...c, token_endpoint_auth_method: 'private_key_jwt', jwks: jwks[c.client_id] }));

const provider = await createProvider({
  modules,
  issuer: `http://127.0.0.1:${port}`,
  resource,
  accessTokenFormat: 'jwt',
  accountOf: () => account,
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
});

provider.listen(port, '127.0.0.1', () => {
  console.log('ready');
});
