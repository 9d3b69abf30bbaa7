// What a user's app writes, type-checked with `strict` against the package's typings.
import init, { KubeClient, InformerFactory, WorkQueue, KubeError, type Diff, type KubeObject, type InformerStatus } from 'kubewasm';

interface PodLike extends KubeObject {
  status?: { phase?: string };
}

async function main(): Promise<void> {
  await init();
  const client = new KubeClient({ server: location.origin, credentials: 'include', maxInFlight: 6 });
  const factory = new InformerFactory(client);
  const pods = factory.informer<PodLike>({ version: 'v1', kind: 'Pod', labelSelector: 'app=web', stripManagedFields: true, labelIndexes: ['app'] });
  factory.start();
  const list = document.getElementById('pods') as HTMLUListElement;
  pods.subscribe((diff: Diff) => {
    const snapshot: readonly PodLike[] = pods.getSnapshot();
    list.replaceChildren(...snapshot.map((p) => Object.assign(document.createElement('li'), { textContent: `${p.metadata.name} ${p.status?.phase ?? ''} (v${diff.version})` })));
  });
  const off = pods.on('update', (oldPod, newPod) => console.log(oldPod.metadata.resourceVersion, '→', newPod.status?.phase));
  pods.on('status', (status: InformerStatus) => {
    document.title = `${status.phase} · ${status.cached}`;
  });
  const resources = await client.discover();
  const deploy = await client.resourceFor('deploy');
  console.log(resources.length, deploy.kind, deploy.namespaced);
  await pods.waitForSync();
  off();
  try {
    pods.lister().list({ labelSelector: 'app in (' });
  } catch (e) {
    if (e instanceof KubeError) console.warn(e.reason, e.position);
  }
  const queue = new WorkQueue({ name: 'demo', timings: false });
  queue.runWorkers(1, async (key: string) => {
    if (!key) return { requeueAfterMs: 1000 };
  });
  for await (const ev of client.resource({ version: 'v1', resource: 'pods', namespace: 'default' }).watch({ allowWatchBookmarks: true })) {
    // A bookmark carries only a resourceVersion: the union says so.
    console.log(ev.type, ev.type === 'BOOKMARK' ? ev.object.metadata.resourceVersion : ev.object.metadata.name);
    break;
  }
}

void main();
