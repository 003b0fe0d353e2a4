import { newTripwireUrl } from '../decoys';
import type { KindModule } from './kind';

/** The image types served, by their first bytes: the content type and the URL's extension. */
const IMAGE_TYPES = [
  { magic: '89504e47', contentType: 'image/png', extension: 'png' },
  { magic: '47494638', contentType: 'image/gif', extension: 'gif' },
  { magic: 'ffd8ff', contentType: 'image/jpeg', extension: 'jpg' },
];

/** A 1×1 transparent GIF: what is served when the owner gives no image of their own. */
export const TRANSPARENT_GIF = Buffer.from(
  'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7',
  'base64',
);

export const webImage: KindModule = {
  howToUse:
    'Embed the image URL where only an intruder would load it: an <img> in an internal page, an HTML email signature, a document that loads remote images. Loading it fires; the image served is your own (image, base64) or a 1×1 transparent GIF. Clients that block remote images (most mail clients by default) do not fire it.',
  risk: {
    base: 40,
    what: 'A web image tripwire',
    action: 'The page, mail or document that embeds this image was opened by someone; find who',
  },
  make: (settings, { image = TRANSPARENT_GIF }) => {
    const type =
      IMAGE_TYPES.find((t) => image.toString('hex').startsWith(t.magic)) ?? IMAGE_TYPES[1]!;
    const { url, token } = newTripwireUrl(settings, 'i');
    return {
      value: `${url}.${type.extension}`,
      tokens: [token],
      artifact: { filename: `logo.${type.extension}`, contentType: type.contentType, body: image },
    };
  },
};
