// Svelte 5 compiles TypeScript in <script lang="ts"> itself; no preprocessor is needed.
export default {};
