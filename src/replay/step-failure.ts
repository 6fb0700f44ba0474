/** A step's check did not hold; the message says what was expected against what was found. */
export class StepFailure extends Error {
  override name = 'StepFailure';
}
