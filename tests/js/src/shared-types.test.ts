// The typings of `kubewasm/shared` hold what its runtime needs: a client
// with a `tokenProvider` names its `identity` (its tokens rotate, so none of
// them can name the worker). This file's checks are its type check (`tsc`
// runs before the tests); the test below only builds the options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SharedOptions } from 'kubewasm/shared';
import type { ClientOptions } from 'kubewasm';

const server = 'http://127.0.0.1:8001';
const tokenProvider = async () => 'token';

const accepted: SharedOptions[] = [
  { client: { server } },
  { client: { server, token: 't' } },
  { client: { server, tokenProvider }, identity: 'alice' },
  { client: { server, token: 't', tokenProvider: undefined }, host: 'worker' },
];

// @ts-expect-error a tokenProvider needs an identity
const withoutIdentity: SharedOptions = { client: { server, tokenProvider } };

// @ts-expect-error an identity that is not a string names no one
const undefinedIdentity: SharedOptions = { client: { server, tokenProvider }, identity: undefined };

const loose: ClientOptions = { server };
// @ts-expect-error a client typed as ClientOptions may have a tokenProvider
const looseWithoutIdentity: SharedOptions = { client: loose };
const looseWithIdentity: SharedOptions = { client: loose, identity: 'alice' };

test('connectShared options: the forms its typings accept build', () => {
  assert.equal(accepted.length, 4);
  for (const o of [withoutIdentity, undefinedIdentity, looseWithoutIdentity, looseWithIdentity]) assert.equal(o.client.server, server);
});
