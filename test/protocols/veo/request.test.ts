import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { veoBody } from '../../../src/protocols/veo/request.ts';
import { videoCall } from '../video-helpers.ts';

describe('veo: video call → predictLongRunning body', () => {
  test('only the prompt, the duration and one sample when nothing else was asked', () => {
    assert.deepEqual(veoBody(videoCall('A fox in the snow', 8)), {
      instances: [{ prompt: 'A fox in the snow' }],
      parameters: { durationSeconds: 8, sampleCount: 1 },
    });
  });

  test('the cloud_a options by their Veo names; resolution and aspect ratio from the variant meta', () => {
    const call = videoCall(
      'A fox',
      6,
      { providerOptions: { group: 'cloud_a', options: { negativePrompt: 'blur', seed: 7, enhancePrompt: false } } },
      { resolution: '1080p', aspect_ratio: '9:16', fps: 24 },
    );
    assert.deepEqual(veoBody(call).parameters, {
      durationSeconds: 6,
      sampleCount: 1,
      negativePrompt: 'blur',
      seed: 7,
      enhancePrompt: false,
      resolution: '1080p',
      aspectRatio: '9:16',
    });
  });

  test('a variant meta that is not a string is not sent; another group’s options are ignored', () => {
    const call = videoCall('A fox', 4, { providerOptions: { group: 'gpu_pool', options: { seed: 3 } } }, { resolution: 1080 });
    assert.deepEqual(veoBody(call).parameters, { durationSeconds: 4, sampleCount: 1 });
  });
});
