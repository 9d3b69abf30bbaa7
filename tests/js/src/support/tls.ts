// Test support: certificates made at test time with the `openssl` CLI, and a
// TLS-terminating proxy in front of the sim (which serves plain HTTP), so the
// Node transport is tested against a real TLS handshake.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as net from 'node:net';
import * as tls from 'node:tls';
import type { AddressInfo } from 'node:net';

export interface KeyPair {
  cert: string;
  key: string;
}

export interface TestPki {
  dir: string;
  ca: KeyPair;
  /** Server certificate for `localhost` and 127.0.0.1. */
  server: KeyPair;
  /** Server certificate naming only `sim.kubewasm.test` (for `serverName`). */
  named: KeyPair;
  /** A second CA, trusted by nobody. */
  otherCa: KeyPair;
  /** Client certificate `CN=alice, O=devs`, issued by `ca`. */
  client: KeyPair;
  /** Client certificate issued by `otherCa`. */
  stranger: KeyPair;
  cleanup(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

const KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function makeCa(dir: string, name: string): KeyPair {
  openssl(dir, ['req', '-x509', ...KEY, '-keyout', `${name}.key`, '-out', `${name}.crt`, '-subj', `/CN=${name}`, '-days', '2',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  return { cert: readFileSync(join(dir, `${name}.crt`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

function issue(dir: string, ca: string, name: string, subject: string, ext: string): KeyPair {
  openssl(dir, ['req', ...KEY, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
  writeFileSync(join(dir, `${name}.ext`), ext);
  openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-set_serial', String(Date.now()),
    '-days', '2', '-out', `${name}.crt`, '-extfile', `${name}.ext`]);
  return { cert: readFileSync(join(dir, `${name}.crt`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

/** A CA, server and client certificates in a fresh temporary directory. */
export function makePki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'kubewasm-tls-'));
  const ca = makeCa(dir, 'ca');
  const otherCa = makeCa(dir, 'other-ca');
  const serverExt = 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n';
  const clientExt = 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n';
  return {
    dir,
    ca,
    otherCa,
    server: issue(dir, 'ca', 'server', '/CN=kubewasm-sim', `${serverExt}subjectAltName=DNS:localhost,IP:127.0.0.1\n`),
    named: issue(dir, 'ca', 'named', '/CN=sim.kubewasm.test', `${serverExt}subjectAltName=DNS:sim.kubewasm.test\n`),
    client: issue(dir, 'ca', 'client', '/O=devs/CN=alice', clientExt),
    stranger: issue(dir, 'other-ca', 'stranger', '/CN=mallory', clientExt),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface TlsProxy {
  /** `https://127.0.0.1:PORT`. */
  url: string;
  port: number;
  /** Completed handshakes: the SNI name the client sent and the client certificate's CN, if any. */
  handshakes: { servername: string | false | null; clientCn?: string }[];
  /** TCP connections accepted, handshake completed or not. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * A TLS server on a free loopback port that pipes each connection to the sim's
 * plain-HTTP port. With `clientCa`, it requires a client certificate issued by it.
 */
export async function tlsProxy(upstream: string, server: KeyPair, clientCa?: string): Promise<TlsProxy> {
  const target = new URL(upstream);
  const handshakes: TlsProxy['handshakes'] = [];
  const sockets = new Set<net.Socket>();
  const srv = tls.createServer(
    { cert: server.cert, key: server.key, ...(clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: true } : {}) },
    (sock) => {
      const peer = sock.getPeerCertificate();
      const cn = peer && 'subject' in peer && peer.subject ? peer.subject.CN : undefined;
      handshakes.push({ servername: sock.servername, ...(cn ? { clientCn: String(cn) } : {}) });
      const up = net.connect(Number(target.port), target.hostname);
      sockets.add(sock).add(up);
      const done = () => { sock.destroy(); up.destroy(); sockets.delete(sock); sockets.delete(up); };
      sock.on('error', done).on('close', done);
      up.on('error', done).on('close', done);
      sock.pipe(up).pipe(sock);
    },
  );
  // Failed handshakes are what some tests expect; keep them off stderr.
  srv.on('tlsClientError', () => {});
  let connections = 0;
  srv.on('connection', () => { connections++; });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    handshakes,
    connections: () => connections,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      srv.close(() => resolve());
    }),
  };
}
