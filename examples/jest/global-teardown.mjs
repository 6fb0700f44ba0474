export default async function globalTeardown() {
  await globalThis.__RAILYARD__?.stop();
}
