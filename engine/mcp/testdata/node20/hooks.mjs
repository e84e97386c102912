// Module hooks for register.mjs: the conformance package's import of
// 'fs' resolves to node:fs plus a globSync that throws, when node:fs has
// none (Node 20).
import fs from 'node:fs';

const shim = 'data:text/javascript,' + encodeURIComponent(
  "export * from 'node:fs';\n" +
  "export { default } from 'node:fs';\n" +
  "export function globSync() { throw new Error('globSync needs Node 22 (only tier-check uses it)'); }\n");

export async function resolve(specifier, context, next) {
  if (!('globSync' in fs) && (specifier === 'fs' || specifier === 'node:fs') &&
      context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
