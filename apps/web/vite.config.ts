/**
 * The web UI's build (run by `npm run build`, scripts/build.ts): served by the hub under /ui/,
 * assets named by content hash (the hub caches them as immutable), no inline script (the hub's
 * Content Security Policy allows scripts from the hub only).
 */
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  root: new URL(".", import.meta.url).pathname,
  base: "/ui/",
  plugins: [react()],
  // React's production build whatever NODE_ENV the building process has (vitest's global setup runs under "test").
  mode: "production",
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    assetsDir: "assets",
    // A module preload polyfill would be an inline script; every browser the UI supports has modulepreload.
    modulePreload: { polyfill: false },
    target: "es2022",
    // Maps are written for whoever debugs a build, but the bundles do not point browsers at them.
    sourcemap: "hidden",
    reportCompressedSize: false,
    rollupOptions: {
      // zod's sources carry esbuild-placed @__PURE__ notes Rollup cannot use; it drops them, harmlessly.
      onwarn(warning, warn) {
        if (warning.code !== "INVALID_ANNOTATION") warn(warning);
      },
    },
  },
});
