import { Faker, en } from '@faker-js/faker';
import { seedFromString } from '../kernel/ids.ts';

/** The same number or account always resolves to the same holder name. */
export function fakeNameFor(identifier: string): string {
  const faker = new Faker({ locale: [en] });
  faker.seed(seedFromString(identifier));
  return `${faker.person.firstName()} ${faker.person.lastName()}`;
}
