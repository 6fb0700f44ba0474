// A scenario's failure reason is free text ("Not enough funds", NOT_ENOUGH_FUNDS, "declined.");
// each wire looks it up in its own table of codes. The word it looks up is the same for every
// wire, so it is made here once.

/**
 * The reason as one lower-case word: trimmed, each run of anything but letters and digits one
 * underscore, none at either end ("Not enough funds." -> "not_enough_funds"); '' for none.
 */
export function reasonWord(reason: string | undefined): string {
  return (reason ?? '')
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}
