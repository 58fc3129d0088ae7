/* The C example bot: protocol 1 (docs/protocol.md) with cJSON, Debian's libcjson.
 *
 * Plays the first legal action of every decision, in every game, and rebuilds the lists sent
 * as deltas ("history", "tricks"): whole = rebuilt[:K_start] + sent. At each deal's end it
 * checks its rebuilt tricks against the deal's summary and says so on stderr (its log).
 * Build: gcc -O2 -o bot bot.c -lcjson
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES (4 * 1024 * 1024) /* the Hearts pass of a 2-player table is 1.8 MB */

static const char *DELTA_LISTS[] = {"history", "tricks"};
static cJSON *kept[2]; /* the whole lists rebuilt so far in this deal (arrays) */

static void reset_kept(void) {
    for (int i = 0; i < 2; i++) {
        cJSON_Delete(kept[i]);
        kept[i] = cJSON_CreateArray();
    }
}

/* kept = kept[:start] + sent */
static void rebuild(int i, int start, const cJSON *sent) {
    while (cJSON_GetArraySize(kept[i]) > start)
        cJSON_DeleteItemFromArray(kept[i], cJSON_GetArraySize(kept[i]) - 1);
    const cJSON *entry;
    cJSON_ArrayForEach(entry, sent) cJSON_AddItemToArray(kept[i], cJSON_Duplicate(entry, 1));
}

static void send(cJSON *reply) {
    char *text = cJSON_PrintUnformatted(reply);
    printf("%s\n", text);
    fflush(stdout);
    free(text);
    cJSON_Delete(reply);
}

static void on_act(const cJSON *message) {
    const cJSON *observation = cJSON_GetObjectItem(message, "observation");
    for (int i = 0; i < 2; i++) {
        char start_key[32];
        snprintf(start_key, sizeof start_key, "%s_start", DELTA_LISTS[i]);
        const cJSON *start = cJSON_GetObjectItem(observation, start_key);
        if (cJSON_IsNumber(start))
            rebuild(i, start->valueint, cJSON_GetObjectItem(observation, DELTA_LISTS[i]));
    }
    const cJSON *legal = cJSON_GetObjectItem(message, "legal_actions");
    cJSON *reply = cJSON_CreateObject();
    cJSON_AddItemToObject(reply, "id", cJSON_Duplicate(cJSON_GetObjectItem(message, "id"), 1));
    cJSON_AddItemToObject(reply, "action", cJSON_Duplicate(cJSON_GetArrayItem(legal, 0), 1));
    send(reply);
}

static void on_deal_end(const cJSON *message) {
    const cJSON *played = cJSON_GetObjectItem(cJSON_GetObjectItem(message, "summary"), "tricks");
    cJSON *tricks = kept[1];
    int ok = 1;
    for (int i = 0; i < cJSON_GetArraySize(tricks); i++)
        ok = ok && cJSON_Compare(cJSON_GetArrayItem(tricks, i), cJSON_GetArrayItem(played, i), 1);
    fprintf(stderr, "deal %d: %d tricks, %d history entries, %s\n",
            cJSON_GetObjectItem(message, "deal")->valueint, cJSON_GetArraySize(tricks),
            cJSON_GetArraySize(kept[0]), ok ? "ok" : "MISMATCH");
    reset_kept();
}

int main(void) {
    char *line = malloc(LINE_MAX_BYTES);
    reset_kept();
    while (line && fgets(line, LINE_MAX_BYTES, stdin)) {
        cJSON *message = cJSON_Parse(line);
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(message, "type"));
        if (type && strcmp(type, "hello") == 0) {
            cJSON *ready = cJSON_CreateObject();
            cJSON_AddStringToObject(ready, "type", "ready");
            cJSON_AddStringToObject(ready, "name", "example-c");
            send(ready);
        } else if (type && strcmp(type, "act") == 0) {
            on_act(message);
        } else if (type && strcmp(type, "deal_end") == 0) {
            on_deal_end(message);
        } else if (type && strcmp(type, "bye") == 0) {
            cJSON_Delete(message);
            break;
        } /* game_end, and notices of later versions: nothing to do */
        cJSON_Delete(message);
    }
    free(line);
    return 0;
}
