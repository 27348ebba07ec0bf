// Capability loops register themselves when imported here (one line per capability).
import '../claims/loops.ts';
import '../signin/loops.ts';
import '../chain/loops.ts';
import '../connections/loops.ts';
import '../webhooks/loops.ts';
