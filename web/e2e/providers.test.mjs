// The first hour in English: see providers-flow.mjs.
import { firstHourFlows } from "./providers-flow.mjs";

firstHourFlows({
  locale: "en-US",
  text: {
    askAdmin: /Ask an administrator/,
    badKey: "The provider refused the API key.",
    editTitle: "Edit local",
    savedUntested: /^Saved, but the connection test failed/,
    saveAndChat: "Save and start chatting",
    assistant: "Assistant",
    question: "Say hello",
    answer: "Hello from the local model.",
  },
});
