import { isRedisVersionAtLeast } from './redis-version';

describe('isRedisVersionAtLeast', () => {
  it('compares major, minor and patch as numbers', () => {
    expect(['7.0.0', '7.0.15', '7.2.4', '7.10.0', '8.0.1', '10.0.0'].map((version) => isRedisVersionAtLeast(version, '7.0.0'))).toEqual([true, true, true, true, true, true]);
    expect(['6.2.14', '6.9.255', '5.0.7', '2.8.18', ''].map((version) => isRedisVersionAtLeast(version, '7.0.0'))).toEqual([false, false, false, false, false]);
  });

  it("holds the service to Bull's minimum, 2.8.18", () => {
    expect(['2.8.18', '2.8.19', '3.0.0', '6.2.14', '7.0.15'].map((version) => isRedisVersionAtLeast(version))).toEqual([true, true, true, true, true]);
    expect(['2.8.17', '2.6.17', '2.8.9'].map((version) => isRedisVersionAtLeast(version))).toEqual([false, false, false]);
  });
});
