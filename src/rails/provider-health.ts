/** Which providers the sandbox operator has taken down (POST /api/v1/sandbox/providers/{name}/outage). */
export class ProviderHealth {
  private readonly down = new Set<string>();
  setDown(name: string, isDown: boolean): void {
    if (isDown) this.down.add(name);
    else this.down.delete(name);
  }
  isDown(name: string): boolean {
    return this.down.has(name);
  }
}
