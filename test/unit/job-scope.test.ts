import { describe, expect, it } from 'vitest';
import { VirtualClock, VIRTUAL_EPOCH } from '../../src/kernel/clock.ts';
import { CryptoRandom, IdGenerator, SeededRandom } from '../../src/kernel/ids.ts';
import { currentJob, inJobScope, JOB_HEADER, jobHeader, joinRunningJob, type JobScope } from '../../src/kernel/job-scope.ts';

function scopeFor(jobId: string, ids: IdGenerator): JobScope {
  return { jobId, round: 1, rank: 0, ids: ids.fork(jobId), entries: 0, finalSection: false, turn: async () => {}, seal: () => {} };
}

describe('a job scope', () => {
  it('gives a job the same ids whatever was drawn before it or beside it', async () => {
    const draw = async (drawnBefore: number) => {
      const ids = new IdGenerator(new VirtualClock(VIRTUAL_EPOCH), new SeededRandom(9));
      for (let i = 0; i < drawnBefore; i++) ids.next('chg');
      return inJobScope(scopeFor('job_a', ids), async () => [ids.next('evt'), ids.next('jrn'), ids.uuid()]);
    };
    expect(await draw(0)).toEqual(await draw(5));
    // Another job forks another stream.
    const ids = new IdGenerator(new VirtualClock(VIRTUAL_EPOCH), new SeededRandom(9));
    const a = await inJobScope(scopeFor('job_a', ids), async () => ids.next('evt'));
    const b = await inJobScope(scopeFor('job_b', ids), async () => ids.next('evt'));
    expect(a).not.toBe(b);
  });

  it('shares crypto randomness rather than forking it: nothing to reproduce there', () => {
    const ids = new IdGenerator(new VirtualClock(VIRTUAL_EPOCH), new CryptoRandom());
    expect(ids.fork('job_a')).toBeUndefined();
  });

  it('lets work that names a running job join it, and nothing else', async () => {
    const ids = new IdGenerator(new VirtualClock(VIRTUAL_EPOCH), new SeededRandom(9));
    let token = '';
    await inJobScope(scopeFor('job_a', ids), async () => {
      token = jobHeader()[JOB_HEADER]!;
      // e.g. the callback receiver, reached over HTTP with the job's header
      expect(await new Promise((done) => setImmediate(() => done(joinRunningJob(token, () => currentJob()?.jobId))))).toBe('job_a');
      expect(joinRunningJob('job_a', () => currentJob()?.jobId)).toBe('job_a'); // a bare job id joins nothing: it stays in its own
    });
    expect(await new Promise((done) => setImmediate(() => done(joinRunningJob(token, () => currentJob()))))).toBeUndefined(); // finished: no longer joinable
    expect(joinRunningJob('job_a', () => currentJob())).toBeUndefined();
    expect(joinRunningJob(undefined, () => currentJob())).toBeUndefined();
  });
});
