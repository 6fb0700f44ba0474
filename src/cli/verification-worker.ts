// The child process that `railyard contracts verify` runs the Pact verifier in. The verifier's
// native core prints its report straight to file descriptor 1, with ANSI colours it always adds,
// and pact-js's request proxy (http-proxy) calls the deprecated util._extend (DEP0060). In a child,
// the report arrives on a pipe the command controls (plain or coloured, on stdout or stderr as the
// reporter needs), and the warning is switched off for this child alone (--disable-warning=DEP0060
// where it is forked). The results come back over the IPC channel.

import { MissingScenarioError, verifyContracts, type VerifyOptions } from '../contracts/contract-verifier.ts';

// The command went away (Ctrl-C, SIGTERM): stop too.
process.on('disconnect', () => process.exit(1));

process.once('message', (options: VerifyOptions) => {
  const answer = (message: unknown) => process.send!(message, () => process.exit(0));
  verifyContracts(options).then(
    (results) => answer({ results }),
    (err: unknown) => answer({ error: err instanceof Error ? err.message : String(err), missingScenario: err instanceof MissingScenarioError }),
  );
});
