// Server rendering and hydration with `kubewasm/react`. The markup comes from
// `renderToString` over a factory that never starts, as on a server (effects
// do not run there); the client hydrates it with a factory whose cache has
// already synced. React requires hydration to render what the server did, so
// the hooks must render the empty cache first and the objects right after,
// without a hydration error and without replacing the server's markup.
import { StrictMode } from 'react';
import { hydrateRoot } from 'react-dom/client';
import { renderToString } from 'react-dom/server';
import init, { KubeClient, InformerFactory, type KubeObject } from 'kubewasm';
import { useInformer, useList, useObject } from 'kubewasm/react';

function Pods({ factory, name }: { factory: InformerFactory; name: string }) {
  const pods = useInformer<KubeObject>(factory, { version: 'v1', resource: 'pods', namespace: 'default' });
  const rows = useList(pods);
  const one = useObject(pods, 'default', name);
  return (
    <section>
      <p id="count">{rows.length}</p>
      <p id="object">{one ? one.metadata.name : 'absent'}</p>
    </section>
  );
}

interface Hydration {
  errors: string[];
  expected: { count: number; name: string };
  /** Whether the server's markup is still in place (hydrated, not rendered again). */
  kept: () => boolean;
}

async function main(): Promise<void> {
  await init();
  const client = new KubeClient({ server: location.origin });
  const factory = new InformerFactory(client);
  const pods = factory.informer({ version: 'v1', resource: 'pods', namespace: 'default' });
  factory.start();
  if (!(await pods.waitForSync())) throw new Error('pods did not sync');
  const name = pods.getSnapshot()[0]?.metadata.name;
  if (!name) throw new Error('no pods in default');

  // The server: its own factory, never started.
  const html = renderToString(<Pods factory={new InformerFactory(client)} name={name} />);
  const root = document.getElementById('root');
  if (!root) throw new Error('no #root');
  root.innerHTML = html;
  const served = root.firstElementChild;

  const errors: string[] = [];
  hydrateRoot(
    root,
    <StrictMode>
      <Pods factory={factory} name={name} />
    </StrictMode>,
    { onRecoverableError: (e) => errors.push(e instanceof Error ? e.message : String(e)) },
  );
  const state: Hydration = {
    errors,
    expected: { count: pods.getSnapshot().length, name },
    kept: () => served !== null && root.firstElementChild === served,
  };
  (window as unknown as { hydration: Hydration }).hydration = state;
}

void main();
