// Relative asset URLs (`base: './'`) let the built site live under any path
// prefix, e.g. `kubectl proxy --www=dist --www-prefix=/ui/`.
import { defineConfig } from 'vite';

declare const process: { env: Record<string, string | undefined> };

const page = (file: string): string => decodeURIComponent(new URL(file, import.meta.url).pathname);

export default defineConfig({
  base: './',
  build: {
    target: 'es2022',
    outDir: 'dist',
    emptyOutDir: true,
    rollupOptions: {
      input: {
        main: page('index.html'),
        worker: page('worker.html'),
      },
    },
  },
  worker: { format: 'es' },
  // `KUBEWASM_API=http://127.0.0.1:8080 npm run dev`: the dev server forwards
  // the API to a running sim or `kubectl proxy`, so the page stays same-origin.
  server: process.env.KUBEWASM_API
    ? { proxy: Object.fromEntries(['/api', '/apis', '/sim'].map((p) => [p, { target: process.env.KUBEWASM_API, changeOrigin: true }])) }
    : {},
  // The package ships its own .wasm next to its ES module; pre-bundling would
  // move the module away from it in the dev server.
  optimizeDeps: { exclude: ['kubewasm'] },
});
