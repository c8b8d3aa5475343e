// undici's Agent by its own module (upstream-response.ts): the class the package's index exports as Agent.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const UndiciAgent: typeof Agent;
  export default UndiciAgent;
}
