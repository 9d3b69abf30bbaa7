// A React app on `kubewasm/react`, type-checked with `strict` and rendered in
// StrictMode: a pod table per namespace, one watched pod, a configmap count,
// a pod by a route's namespace, forty pod counts, and a switch that unmounts
// them all (the page test drives it).
import { StrictMode, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import init, { KubeClient, InformerFactory, type KubeObject } from 'kubewasm';
import { useInformer, useList, useObject } from 'kubewasm/react';

interface Pod extends KubeObject {
  status?: { phase?: string };
}

function PodTable({ factory, namespace }: { factory: InformerFactory; namespace: string }) {
  const pods = useInformer<Pod>(factory, { version: 'v1', resource: 'pods' });
  const rows: readonly Pod[] = useList(pods, { namespace });
  const web = useList(pods, { namespace, labelSelector: 'app=web' });
  // A Deployment whose spec.selector is null selects nothing.
  const none = useList(pods, { namespace, labelSelector: null });
  const watched: Pod | undefined = useObject(pods, namespace, 'watched');
  return (
    <section>
      <p id="watched">{watched ? `${watched.metadata.name} ${watched.metadata.labels?.['stage'] ?? ''}` : 'absent'}</p>
      <p id="web-count">{web.length}</p>
      <p id="none-count">{none.length}</p>
      <table id="pods">
        <tbody>
          {rows.map((p) => (
            <tr key={p.metadata.name} data-key={`${p.metadata.namespace}/${p.metadata.name}`}>
              <td>{p.metadata.name}</td>
              <td>{p.status?.phase}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

// One pod by a route's namespace and name, both unset while the route loads:
// an informer of every namespace renders it absent rather than throwing.
function RoutePod({ factory }: { factory: InformerFactory }) {
  const [route, setRoute] = useState<{ namespace?: string | null; name: string }>({ name: 'db-0' });
  useEffect(() => {
    (window as unknown as { setRoute: typeof setRoute }).setRoute = setRoute;
  }, []);
  const pods = useInformer<Pod>(factory, { version: 'v1', resource: 'pods' });
  const pod = useObject(pods, route.namespace, route.name);
  return <p id="route-pod">{pod ? `${pod.metadata.namespace}/${pod.metadata.name}` : 'absent'}</p>;
}

function ConfigMapCount({ factory }: { factory: InformerFactory }) {
  // Functions written inline, as components do: a new identity every render and every mount.
  const cms = useInformer(factory, {
    version: 'v1',
    resource: 'configmaps',
    transform: (o) => o,
    indexers: { byName: (o) => o.metadata.name },
  });
  return <p id="configmaps">{useList(cms).length}</p>;
}

// A count per filter, more lists than the informer keeps recent filters for:
// each must keep its array while unchanged, or React re-renders without end.
function PodCount({ factory, filter }: { factory: InformerFactory; filter: string }) {
  const pods = useInformer<Pod>(factory, { version: 'v1', resource: 'pods' });
  return <span>{useList(pods, { labelSelector: filter }).length}</span>;
}

function ManyCounts({ factory }: { factory: InformerFactory }) {
  const filters = Array.from({ length: 40 }, (_, i) => `count notin (c${i})`);
  return (
    <p id="counts">
      {filters.map((f) => (
        <PodCount key={f} factory={factory} filter={f} />
      ))}
    </p>
  );
}

function App({ factory }: { factory: InformerFactory }) {
  const [shown, setShown] = useState(true);
  useEffect(() => {
    (window as unknown as { setShown: (s: boolean) => void }).setShown = setShown;
  }, []);
  if (!shown) return <p id="unmounted">unmounted</p>;
  return (
    <>
      <PodTable factory={factory} namespace="default" />
      {/* The same informer again: one handle, one watch. */}
      <PodTable factory={factory} namespace="payments" />
      <ConfigMapCount factory={factory} />
      <RoutePod factory={factory} />
      <ManyCounts factory={factory} />
    </>
  );
}

// A component that owns its factory and shuts it down when it goes. Under
// StrictMode that cleanup runs once right after the first mount, and the
// component then mounts again with the same (shut down) factory.
function OwnedFactory({ client }: { client: KubeClient }) {
  const factory = useMemo(() => new InformerFactory(client), [client]);
  useEffect(() => () => factory.shutdown(), [factory]);
  const pods = useInformer<Pod>(factory, { version: 'v1', resource: 'pods' });
  return <p id="owned-count">{useList(pods, { namespace: 'default' }).length}</p>;
}

async function main(): Promise<void> {
  await init();
  const factory = new InformerFactory(new KubeClient({ server: location.origin }), { releaseGraceMs: 1000 });
  const root = document.getElementById('root');
  if (!root) throw new Error('no #root');
  createRoot(root).render(
    <StrictMode>
      <App factory={factory} />
    </StrictMode>,
  );
  // Driven by the page test: a second root whose component owns its factory.
  const client = new KubeClient({ server: location.origin });
  const owned = document.createElement('div');
  document.body.append(owned);
  const ownedRoot = createRoot(owned);
  const w = window as unknown as { mountOwned: (on: boolean) => void };
  w.mountOwned = (on) =>
    ownedRoot.render(on ? <StrictMode><OwnedFactory client={client} /></StrictMode> : null);
}

void main();
