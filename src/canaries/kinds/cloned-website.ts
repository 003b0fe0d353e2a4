import { newTripwireUrl } from '../decoys';
import type { KindModule } from './kind';

export const clonedWebsite: KindModule = {
  howToUse:
    'Paste the snippet into your login page’s HTML (or a script every page loads). Served from your site_url’s origin it does nothing; when a phishing kit copies the page and serves it from any other origin, each visitor’s browser loads a one-pixel image from this service, which fires with the visitor’s address and browser. It does not fire when the cloner strips scripts, serves the page with a Content-Security-Policy that blocks the image, or visitors block JavaScript; the cloned site’s address is not recorded.',
  risk: {
    base: 60,
    what: 'A cloned-website tripwire',
    action:
      'Your page is being served from another origin: look for a phishing site imitating it, and warn users who may have entered credentials',
  },
  make: (settings, { siteUrl }) => {
    const { url, token } = newTripwireUrl(settings, 'i');
    const origin = new URL(siteUrl!).origin;
    // The origin is compared as the browser reports it; the image goes out only off that origin.
    const snippet = `<script>(function(){if(location.origin!==${JSON.stringify(origin)}){new Image().src=${JSON.stringify(`${url}.gif`)};}})();</script>`;
    return { value: snippet, tokens: [token] };
  },
};
