// 第一个小时，中文界面：见 providers-flow.mjs。
import { firstHourFlows } from "./providers-flow.mjs";

firstHourFlows({
  locale: "zh-CN",
  text: {
    askAdmin: /请联系管理员/,
    badKey: "提供方拒绝了这个 API 密钥。",
    editTitle: "编辑 local",
    savedUntested: /^已保存，但连接测试未通过/,
    saveAndChat: "保存并开始聊天",
    assistant: "助手",
    question: "你好，请自我介绍",
    answer: "你好！我是本地模型。",
  },
});
