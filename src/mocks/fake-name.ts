// The English locale alone: importing every locale costs a quarter of a second at start-up.
import { faker } from '@faker-js/faker/locale/en';
import { seedFromString } from '../kernel/ids.ts';

/** The same number or account always resolves to the same holder name. */
export function fakeNameFor(identifier: string): string {
  faker.seed(seedFromString(identifier));
  return `${faker.person.firstName()} ${faker.person.lastName()}`;
}
