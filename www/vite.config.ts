// Relative asset URLs (`base: './'`) let the built site live under any path
// prefix, e.g. `kubectl proxy --www=dist --www-prefix=/ui/`.
import { defineConfig } from 'vite';

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
  // The package ships its own .wasm next to its ES module; pre-bundling would
  // move the module away from it in the dev server.
  optimizeDeps: { exclude: ['kubewasm'] },
});
