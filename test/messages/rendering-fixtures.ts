/** The served call and settlement the rendering tests feed the messages encoders. */
import type { TextCall, TextSettlement } from '../../src/pipeline/kinds/text.ts';
import { chatRequest, endpoint, routeOf } from '../chat/helpers.ts';

export const call: TextCall = {
  requestId: 'req_abc',
  request: chatRequest(),
  modelId: 'gateway/m',
  endpoint: routeOf(endpoint('m')),
  createdAt: 1_700_000_000_500,
};
export const settlement: TextSettlement = {
  usage: { inputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 10, cacheWrite1hTokens: 4, outputTokens: 7, reasoningTokens: 3 },
  searchUnits: 0,
  charged: 123_456n,
  overHold: 0n,
};
