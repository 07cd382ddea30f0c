import { VERSION as CONTROLLER_VERSION } from '../controller/controller.js';

/** The build's version: the one the controller registers with (kept equal to package.json's by a test). */
export const VERSION = CONTROLLER_VERSION;
