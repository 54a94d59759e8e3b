/* Compiles Debian's llhttp (node-llhttp, 8.1.0) into the addon. gyp rejects
 * absolute source paths, hence this wrapper. binding.gyp builds it with
 * -fvisibility=hidden: the node binary exports its own llhttp (9.x) whose
 * symbols would otherwise interpose ours and write past our 8.1.0 structs. */
#include "/usr/share/llhttp/api.c"
