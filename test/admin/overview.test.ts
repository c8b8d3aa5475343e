// The console's admin routes on the embedded store (overview-suite.ts).
import t from 'tap';
import { overviewSuite } from './overview-suite.ts';

await overviewSuite(t, '');
