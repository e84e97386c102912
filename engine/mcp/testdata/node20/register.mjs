// A shim for running @modelcontextprotocol/conformance on Node 20, loaded
// with `node --import`: the package asks for Node 22 and imports
// globSync from 'fs', which Node 20 lacks, so on Node 20 the import fails
// before any scenario runs. Only the package's tier-check command calls
// globSync; the client scenarios engine/mcp runs never do. hooks.mjs
// gives the package an 'fs' with a globSync that says so, and changes
// nothing on a Node that has it.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
