import { defineConfig } from 'vite';

// Two pages: the plain TypeScript app and the React one.
export default defineConfig({
  build: { rollupOptions: { input: { main: 'index.html', react: 'react.html' } } },
});
