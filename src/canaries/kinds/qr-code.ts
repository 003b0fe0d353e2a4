import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { newTripwireUrl } from '../decoys';
import type { KindModule } from './kind';

/** Pixels per module, and the quiet zone in modules that readers need around the code. */
const SCALE = 8;
const MARGIN = 4;

export const qrCode: KindModule = {
  howToUse:
    'Print the PNG (or the SVG in files) where only an intruder would scan it: on a server rack, a “Wi-Fi guest access” notice in a restricted area, a document. Scanning it opens the tripwire URL, which fires; the phone sees an ordinary page. A scanner that only reads the code without opening it does not fire.',
  risk: {
    base: 40,
    what: 'A QR code tripwire',
    action: 'Someone scanned the code where you placed it; check who had access to that place',
  },
  make: (settings) => {
    const { url, token } = newTripwireUrl(settings);
    const { modules } = QRCode.create(url, { errorCorrectionLevel: 'M' });
    return {
      value: url,
      tokens: [token],
      files: [{ path: 'qr-code.svg', content: svgOf(modules) }],
      artifact: { filename: 'qr-code.png', contentType: 'image/png', body: pngOf(modules) },
    };
  },
};

type Modules = QRCode.QRCode['modules'];

/** Black modules on white, SCALE pixels each, with the quiet zone. */
function pngOf(modules: Modules): Buffer {
  const side = (modules.size + 2 * MARGIN) * SCALE;
  const png = new PNG({ width: side, height: side, colorType: 0, inputHasAlpha: false });
  for (let y = 0; y < side; y++) {
    for (let x = 0; x < side; x++) {
      const [row, col] = [Math.floor(y / SCALE) - MARGIN, Math.floor(x / SCALE) - MARGIN];
      const dark = row >= 0 && col >= 0 && row < modules.size && col < modules.size;
      const value = dark && modules.get(row, col) ? 0 : 255;
      png.data.fill(value, (y * side + x) * 4, (y * side + x) * 4 + 3);
      png.data[(y * side + x) * 4 + 3] = 255;
    }
  }
  return PNG.sync.write(png, { colorType: 0 });
}

/** The same code as one SVG path, a unit square per dark module. */
function svgOf(modules: Modules): string {
  const side = modules.size + 2 * MARGIN;
  const squares: string[] = [];
  for (let row = 0; row < modules.size; row++) {
    for (let col = 0; col < modules.size; col++) {
      if (modules.get(row, col)) squares.push(`M${col + MARGIN} ${row + MARGIN}h1v1h-1z`);
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" shape-rendering="crispEdges"><rect width="100%" height="100%" fill="#fff"/><path fill="#000" d="${squares.join('')}"/></svg>\n`;
}
