// Image generation and an edit with the official `openai` SDK: a generated PNG saved to a file,
// downloaded from the gateway's signed URL, then edited with a mask.
//   GATEWAY_API_KEY=gateway_… ./node_modules/.bin/node examples/images.mjs [out-dir]
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { apiKey, baseUrl } from './gateway-env.mjs';

const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey });
const outDir = process.argv[2] ?? (await mkdtemp(join(tmpdir(), 'gateway-images-')));

// The default response_format is `url`: a URL of the gateway itself, valid 10 minutes, no key needed.
const generated = await client.images.generate({ model: 'gateway/prism-image-2', prompt: 'A lighthouse at dusk', size: '1024x1024' });
const download = await fetch(generated.data[0].url);
const picture = Buffer.from(await download.arrayBuffer());
const generatedPath = join(outDir, 'lighthouse.png');
await writeFile(generatedPath, picture);
console.log(`generated ${generatedPath} (${picture.length} bytes)`);

// An edit uploads the image (and a mask of the same size) as multipart; b64_json answers inline.
const edited = await client.images.edit({
  model: 'gateway/prism-image-2',
  prompt: 'Add a full moon',
  image: await toFile(picture, 'lighthouse.png', { type: 'image/png' }),
  mask: await toFile(picture, 'mask.png', { type: 'image/png' }),
  response_format: 'b64_json',
});
const editedPath = join(outDir, 'lighthouse-moon.png');
await writeFile(editedPath, Buffer.from(edited.data[0].b64_json, 'base64'));
console.log(`edited ${editedPath}`);
