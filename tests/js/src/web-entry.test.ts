// The web entry's KubeClient, imported in Node (the same module instance the
// Node entry initialized): it has `fetch` only, and refuses what needs the
// Node transport instead of ignoring it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeError } from 'kubewasm';
import { KubeClient as WebKubeClient } from 'kubewasm/web';

const server = process.env.KUBEWASM_SIM_URL;
const token = process.env.KUBEWASM_SIM_TOKEN;
if (!server) throw new Error('KUBEWASM_SIM_URL is not set: run through scripts/with-sim.sh');

test("the web entry's client lists over fetch and refuses transport 'node' and tls", async () => {
  const list = await new WebKubeClient({ server, token }).resource({ version: 'v1', resource: 'pods' }).list({ limit: 2 });
  assert.equal(list.items.length, 2);
  const invalid = (e: unknown) => e instanceof KubeError && e.reason === 'Invalid';
  assert.throws(() => new WebKubeClient({ server, transport: 'node' }), (e: unknown) => invalid(e) && /Node entry/.test((e as Error).message));
  assert.throws(() => new WebKubeClient({ server, tls: { insecureSkipTlsVerify: true } }), invalid);
});
