// Shared by the package tests: the sim that scripts/with-sim.sh started, its
// control endpoints, and waiting on a condition.
export const server = process.env.KUBEWASM_SIM_URL ?? '';
export const token = process.env.KUBEWASM_SIM_TOKEN;
if (!server) throw new Error('KUBEWASM_SIM_URL is not set: run through scripts/with-sim.sh');

/** GET (no body) or POST (a JSON body) a control endpoint and return its JSON. */
export const sim = async <T>(path: string, body?: unknown): Promise<T> => {
  const r = await fetch(`${server}${path}`, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) });
  return (await r.json()) as T;
};

/** `key → resourceVersion` of every object of `resource` in the sim. */
export const simState = async (resource = 'pods') =>
  (await sim<{ items: Record<string, string> }>(`/sim/state?resource=${resource}`)).items;

/** Watches the sim has open. */
export const openWatches = async () => (await sim<{ openWatches: number }>('/sim/stats')).openWatches;

/** Resolve once `cond` holds; throw after `ms`. */
export const until = async (cond: () => boolean | Promise<boolean>, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};
