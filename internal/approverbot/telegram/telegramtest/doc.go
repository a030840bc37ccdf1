// Package telegramtest provides a fake Telegram Bot API for tests: an
// httptest server that serves the documented methods the approver bot uses
// (getMe, getUpdates with long polling and offset confirmation,
// sendMessage, editMessageText, answerCallbackQuery) at
// /bot<token>/<method>, with the documented {"ok":true,"result":…} and
// {"ok":false,"error_code":…,"description":…} answers, the HTML parse mode
// (a message with unescaped or unsupported markup is refused as Telegram
// refuses it), the 4096-character and 64-byte callback_data limits, and
// 429 answers with parameters.retry_after on demand. What the bot sent is
// exposed on Go channels; a user's tap on an inline button is queued as a
// callback_query update for the bot's next getUpdates.
package telegramtest
