import { BASE32, randomFrom } from '../decoys';
import type { KindModule } from './kind';

export const ragMarker: KindModule = {
  howToUse:
    'Embed it in a document (a footer or a reference line). It fires when it shows up again: in a shield inspection, a leak report, or presented as a credential.',
  risk: {
    base: 50,
    what: 'A document marker',
    action: 'The document reached a place it should not; find the system or person that exposed it',
  },
  make: () => {
    const marker = `ref-${randomFrom(BASE32, 22)}`;
    return { value: marker, tokens: [marker] };
  },
};
