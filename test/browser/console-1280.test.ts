// The console's tabs at 1280 px in headless Chromium (console-suite.ts).
import t from 'tap';
import { launch, WIDTHS } from './chromium.ts';
import { consoleGateway, tabsAtWidth } from './console-suite.ts';

const browser = await launch(t);
if (browser) {
  const { gw, made, records } = await consoleGateway(t);
  tabsAtWidth(t, browser, gw, made, records, WIDTHS[0]);
}
