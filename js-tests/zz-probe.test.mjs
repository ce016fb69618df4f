import { test, after } from 'node:test';
import { FaultTolerantRelayer } from '../pkg/dist/node.mjs';
import { useMockNodes } from './helpers/mock-node.mjs';
import { startRedis } from './helpers/redis.mjs';
const node = useMockNodes(after);
test('concurrent', async () => {
  const redis = await startRedis();
  const shared = await node([{ result: '0x1' }]);
  const opts = { chainId: 1, quota: { key: { cuPerSecond: 600 } }, fleet: { redis: { url: redis.url } } };
  const rs = Array.from({ length: 2 }, () => new FaultTolerantRelayer([{ url: shared.url, quotaGroup: 'key' }], opts));
  await Promise.all(rs.map((r) => r.request({ method: 'eth_blockNumber' })));
  console.log('checks', shared.chainChecks());
  const rs2 = Array.from({ length: 2 }, () => new FaultTolerantRelayer([{ url: shared.url + '/y', quotaGroup: 'key' }], opts));
  await Promise.all(rs2.map((r) => r.request({ method: 'eth_getBalance', params: ['0x' + '1'.repeat(40), 'latest'] })));
  console.log('checks', shared.chainChecks());
  await Promise.all([...rs, ...rs2].map((r) => r.close()));
  await redis.stop();
});
