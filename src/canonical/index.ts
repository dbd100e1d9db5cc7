export type * from './request.ts';
export type * from './message.ts';
export type * from './result.ts';
export type * from './stream.ts';
export type * from './usage.ts';
export { ZERO_USAGE, cacheWritesByLifetime, totalInputTokens } from './usage.ts';
export { BatchCollector } from './stream.ts';
export type * from './image.ts';
export type * from './video.ts';
