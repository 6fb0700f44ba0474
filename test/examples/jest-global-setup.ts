// Jest's two hooks, as Vitest runs a global setup: the setup before any test file, the teardown
// it returns after the last, in this one process, as Jest runs them.
type Hook = { default: () => Promise<void> };
const hook = async (name: string) => ((await import(new URL(`../../examples/jest/${name}`, import.meta.url).href)) as Hook).default;

export default async function setup() {
  await (await hook('global-setup.mjs'))();
  const teardown = await hook('global-teardown.mjs');
  return () => teardown();
}
