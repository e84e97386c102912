// Test-only: a protected MCP server as real ones are, for the end-to-end
// tests of MCP authorization (engine/mcp/connect/protectedtest starts it).
// One process runs, on loopback ports (AS_PORT and MCP_PORT; 0 or unset
// picks free ones):
//   - the authorization server: oidc-provider (../../../oauth/testdata/
//     provider-lib.mjs) with the MCP server as its only resource, opaque
//     access tokens of ACCESS_TTL seconds (default 3600), refresh tokens,
//     PKCE, dynamic registration, revocation, introspection and client
//     credentials (client SERVICE_ID). Logging in and consenting is
//     automatic, as the account the authorization request's login_hint
//     names (default "test-user"): two people are two accounts.
//   - the MCP server: the official TypeScript SDK's McpServer over its
//     StreamableHTTPServerTransport (stateful sessions, each bound to the
//     subject that opened it) at /mcp, behind the SDK's requireBearerAuth
//     with resourceMetadataUrl and expectedResource, whose verifier asks
//     the authorization server's introspection endpoint (RFC 7662) on
//     every request, so an expired or revoked token is refused at once.
//     Its protected resource metadata (RFC 9728) is served by the SDK's
//     mcpAuthMetadataRouter at /.well-known/oauth-protected-resource/mcp.
//     Tools: whoami (read-only) answers the token's subject and scopes;
//     create_issue (title) answers "created issue <n> as <subject>".
//     GET /test/calls lists every tool call (tool, subject, token
//     fingerprint: the first 12 hex digits of the token's SHA-256, session,
//     arguments), GET /test/refusals every refused request (status,
//     fingerprint, error); both JSON, without authorization.
// NODE_MODULES is the folder holding oidc-provider, MCP_NODE_MODULES the
// one holding @modelcontextprotocol/sdk (with express and zod). Once both
// listen it prints one line: ready {"issuer":"…","mcp":"…"}.
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createProvider } from '../../../oauth/testdata/provider-lib.mjs';

const here = (rel) => new URL(rel, import.meta.url).pathname;
const modules = process.env.NODE_MODULES || here('../../../oauth/testdata/npm/node_modules');
const mcpModules = process.env.MCP_NODE_MODULES || here('../../../testdata/npm/node_modules');
const accessTTL = Number(process.env.ACCESS_TTL || 3600);
const fromMCP = (rel) => import(pathToFileURL(join(mcpModules, rel)).href);
const sdk = (rel) => fromMCP(join('@modelcontextprotocol', 'sdk', 'dist', 'esm', rel));

const { McpServer } = await sdk('server/mcp.js');
const { StreamableHTTPServerTransport } = await sdk('server/streamableHttp.js');
const { mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } = await sdk('server/auth/router.js');
const { requireBearerAuth } = await sdk('server/auth/middleware/bearerAuth.js');
const { InvalidTokenError, ServerError } = await sdk('server/auth/errors.js');
const { createMcpExpressApp } = await sdk('server/express.js');
const { isInitializeRequest } = await sdk('types.js');
const z = await fromMCP('zod/v4/index.js');

// The resource server's own client, with which it introspects tokens,
// and the confidential client allowed client credentials (a service
// identity).
const introspector = { id: 'mcp-resource-server', secret: 'rs-secret-not-a-real-one' };
const service = { id: process.env.SERVICE_ID || 'service', secret: process.env.SERVICE_SECRET || 'service-secret-not-a-real-one' };

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server.address().port));
  });
}

const fingerprint = (token) => (token ? createHash('sha256').update(token).digest('hex').slice(0, 12) : '');
const bearer = (req) => /^Bearer (.+)$/i.exec(req.headers.authorization || '')?.[1] || '';

// Both listen first: the issuer and the resource are their addresses.
const asHTTP = http.createServer();
const app = createMcpExpressApp({ host: '127.0.0.1' });
const mcpHTTP = http.createServer(app);
const issuer = `http://127.0.0.1:${await listen(asHTTP, Number(process.env.AS_PORT || 0))}`;
const mcpURL = new URL(`http://127.0.0.1:${await listen(mcpHTTP, Number(process.env.MCP_PORT || 0))}/mcp`);
const resource = mcpURL.href;

const provider = await createProvider({
  modules,
  issuer,
  resource,
  accessTokenTTL: accessTTL,
  accessTokenFormat: 'opaque',
  accountOf: (details) => details.params.login_hint || 'test-user',
  // Only the resource server introspects, and any token.
  introspectionAllowed: (_ctx, client) => client.clientId === introspector.id,
  clients: [
    {
      client_id: introspector.id,
      client_secret: introspector.secret,
      grant_types: [],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
    {
      client_id: service.id,
      client_secret: service.secret,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
});
asHTTP.on('request', provider.callback());

const asMetadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();

// verifier checks a token at the introspection endpoint, on every request.
const verifier = {
  async verifyAccessToken(token) {
    const resp = await fetch(asMetadata.introspection_endpoint, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${introspector.id}:${introspector.secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
    });
    if (!resp.ok) {
      throw new ServerError(`introspection answered ${resp.status}`);
    }
    const data = await resp.json();
    if (!data.active) {
      throw new InvalidTokenError('Token is not active');
    }
    if (data.token_type !== 'Bearer') {
      throw new InvalidTokenError('Not an access token');
    }
    const aud = [data.aud ?? []].flat().find((a) => URL.canParse(a) && new URL(a).origin === mcpURL.origin);
    return {
      token,
      clientId: data.client_id,
      scopes: data.scope ? data.scope.split(' ') : [],
      expiresAt: data.exp,
      resource: aud ? new URL(aud) : undefined,
      extra: { subject: data.sub || `client:${data.client_id}` },
    };
  },
};

const calls = [];
const refusals = [];
let issues = 0;

// newServer is the McpServer of one session; its tools act as the
// subject of the token each call carries.
function newServer(session) {
  const server = new McpServer({ name: 'protected-test-server', version: '1.0.0' });
  const record = (tool, extra, args) => {
    const auth = extra.authInfo;
    calls.push({ tool, subject: auth.extra.subject, fingerprint: fingerprint(auth.token), scopes: auth.scopes, session: session(), arguments: args });
    return auth;
  };
  server.registerTool('whoami', {
    description: 'Tells who the caller is at this server and which scopes their token carries.',
    outputSchema: { subject: z.string(), scopes: z.array(z.string()) },
    annotations: { readOnlyHint: true },
  }, async (extra) => {
    const auth = record('whoami', extra, {});
    const out = { subject: auth.extra.subject, scopes: auth.scopes };
    return { content: [{ type: 'text', text: `${out.subject} (scopes: ${out.scopes.join(' ')})` }], structuredContent: out };
  });
  server.registerTool('create_issue', {
    description: 'Creates an issue with a title, as the caller.',
    inputSchema: { title: z.string() },
    annotations: { readOnlyHint: false, destructiveHint: false },
  }, async ({ title }, extra) => {
    const auth = record('create_issue', extra, { title });
    issues += 1;
    return { content: [{ type: 'text', text: `created issue ${issues} as ${auth.extra.subject}` }] };
  });
  return server;
}

app.use(mcpAuthMetadataRouter({
  oauthMetadata: asMetadata,
  resourceServerUrl: mcpURL,
  scopesSupported: ['mcp:read', 'mcp:write'],
  resourceName: 'agentbot protected test server',
}));

app.get('/test/calls', (_req, res) => res.json(calls));
app.get('/test/refusals', (_req, res) => res.json(refusals));

const sessions = new Map(); // session id -> { transport, subject }

// refuse answers with a JSON-RPC error (recorded by the hook below when
// it is a 403 or 404).
function refuse(res, status, code, message) {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

// Every refused request to /mcp is recorded (the bearer middleware's 401
// and 403 included).
app.use('/mcp', (req, res, next) => {
  res.on('finish', () => {
    if (res.statusCode === 401 || res.statusCode === 403 || res.statusCode === 404) {
      const www = res.get('WWW-Authenticate') || '';
      const error = /error_description="([^"]*)"/.exec(www)?.[1] || res.locals.refused || '';
      refusals.push({ method: req.method, status: res.statusCode, fingerprint: fingerprint(bearer(req)), error });
    }
  });
  next();
});

const auth = requireBearerAuth({
  verifier,
  resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpURL),
  expectedResource: mcpURL,
});

// session is the session a request names, when it belongs to the
// request's subject; otherwise it answers and returns undefined.
function session(req, res) {
  const id = req.headers['mcp-session-id'];
  const s = sessions.get(id);
  if (!s) {
    res.locals.refused = 'Session not found';
    refuse(res, 404, -32001, 'Session not found');
    return undefined;
  }
  if (s.subject !== req.auth.extra.subject) {
    res.locals.refused = 'Session belongs to another subject';
    refuse(res, 403, -32000, 'This session belongs to someone else');
    return undefined;
  }
  return s;
}

app.post('/mcp', auth, async (req, res) => {
  try {
    if (req.headers['mcp-session-id']) {
      const s = session(req, res);
      if (s) await s.transport.handleRequest(req, res, req.body);
      return;
    }
    if (!isInitializeRequest(req.body)) {
      refuse(res, 400, -32000, 'Bad Request: No valid session ID provided');
      return;
    }
    const subject = req.auth.extra.subject;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, { transport, subject }),
    });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await newServer(() => transport.sessionId).connect(transport);
    await transport.handleRequest(req, res, req.body);
  } catch (err) {
    console.error('MCP request failed:', err);
    if (!res.headersSent) {
      refuse(res, 500, -32603, 'Internal server error');
    }
  }
});

for (const method of ['get', 'delete']) {
  app[method]('/mcp', auth, async (req, res) => {
    const s = session(req, res);
    if (s) await s.transport.handleRequest(req, res);
  });
}

console.log(`ready ${JSON.stringify({ issuer, mcp: resource })}`);
