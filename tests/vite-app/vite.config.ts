import { defineConfig } from 'vite';

// Three pages: the plain TypeScript app, the React one, and React hydrating server-rendered markup.
export default defineConfig({
  build: { rollupOptions: { input: { main: 'index.html', react: 'react.html', hydrate: 'hydrate.html' } } },
});
