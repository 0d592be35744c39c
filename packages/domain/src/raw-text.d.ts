/** Text files imported as strings (Vite's `?raw`), for tests that read real tool output samples. */
declare module "*.txt?raw" {
  const text: string;
  export default text;
}
