// The first hour in English: see providers-flow.mjs.
import { firstHourFlows } from "./providers-flow.mjs";

firstHourFlows({
  locale: "en-US",
  text: {
    askAdmin: /Ask an administrator/,
    badKey: /refused the API key/,
    assistant: "Assistant",
    question: "Say hello",
    answer: "Hello from the local model.",
  },
});
