// A small YAML emitter for JSON-shaped values (what `kubectl get -o yaml`
// shows). Strings are quoted whenever a plain scalar could be read back as
// something else, so the output always round-trips.

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const PLAIN = /^[A-Za-z_./][A-Za-z0-9_./ :@+-]*$/;
const RESERVED = /^(true|false|yes|no|on|off|null|~|y|n)$/i;

function scalar(s: string): string {
  if (s === '' || !PLAIN.test(s) || RESERVED.test(s) || /: |\s$| #/.test(s) || /^[0-9.+-]/.test(s)) return JSON.stringify(s);
  return s;
}

const key = (k: string): string => scalar(k);

function emit(v: unknown, indent: string, out: string[], inSeq: boolean): void {
  if (Array.isArray(v)) {
    if (v.length === 0) { out[out.length - 1] += ' []'; return; }
    for (const item of v) {
      if (item !== null && typeof item === 'object' && !Array.isArray(item) && Object.keys(item).length > 0) {
        // First key on the dash line, the rest aligned under it.
        out.push(`${indent}- `);
        emit(item, indent + '  ', out, true);
      } else {
        out.push(`${indent}-`);
        emit(item, indent + '  ', out, false);
      }
    }
    return;
  }
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, Json>);
    if (entries.length === 0) { out[out.length - 1] += ' {}'; return; }
    entries.forEach(([k, child], i) => {
      const line = `${key(k)}:`;
      if (inSeq && i === 0) out[out.length - 1] += line;
      else out.push(indent + line);
      const nested = child !== null && typeof child === 'object';
      emit(child, nested ? (Array.isArray(child) ? indent : indent + '  ') : indent, out, false);
    });
    return;
  }
  const text = typeof v === 'string' ? scalar(v) : v === undefined ? 'null' : JSON.stringify(v);
  out[out.length - 1] += ` ${text}`;
}

/** Render a JSON-shaped value as block-style YAML. */
export function toYaml(value: unknown): string {
  const out: string[] = [''];
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    out.pop();
    const entries = Object.entries(value as Record<string, Json>);
    for (const [k, child] of entries) {
      out.push(`${key(k)}:`);
      const nested = child !== null && typeof child === 'object';
      emit(child, nested && !Array.isArray(child) ? '  ' : '', out, false);
    }
  } else {
    emit(value, '', out, false);
  }
  return out.join('\n').replace(/^ /, '') + '\n';
}
