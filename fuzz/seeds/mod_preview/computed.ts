import { atom } from "claude-code";
import x from "./lib";
export const register = (on: (e: string, f: Function) => void, { $ }: any): void => {
  on(`turn.${x}`, () => {});
  $.ui[x]();
};
