/** Node entry: the same API as the main entry, already initialized. */
export * from './web/index.js';
