// test/phone/caller-is-warm-transferred-to-a-person.test.ts over Plivo: the same calls in a file of
// their own, so the carriers' rigs ring side by side rather than one after another.
import { describeNobodyPicksUp, describeWarmTransfer } from '../warm-transfer-to-a-person.ts';

describeWarmTransfer(['plivo']);
describeNobodyPicksUp(['plivo']);
