// Capability CLI commands register themselves when imported here (one line per capability).
import './signin/cli.ts';
import './claims/cli.ts';
import './swap/cli.ts';
import './plugin-documents/cli.ts';
import './chain/cli.ts';
