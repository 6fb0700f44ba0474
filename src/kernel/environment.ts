/** The data partition a key's prefix selects: `sk_test_` and `sk_live_` never see each other's data. */
export type Environment = 'test' | 'live';
