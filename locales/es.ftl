# Español. Same message ids as en.ftl. CLDR data: es (https://cldr.unicode.org/).

## Dates and times (the dates themselves are CLDR data: src/domain/i18n/cldr.rs)
date-range = { $from } – { $to }
date-from = desde el { $date }
datetime-local = { $date }, { $time } (hora local)

## Shared phrases
hi = Hola, { $name }:
hi-no-name = Hola:
label-colon = { $label }:
label-hotel = Hotel
label-booking = Reserva
label-booking-id = ID de reserva
label-hcn = Número de confirmación del hotel
label-checkin = Entrada
label-checkout = Salida
label-room = Habitación
label-room-n = Habitación { $n }
label-guests = Huéspedes
label-total = Precio total
label-pnr = Localizador de la aerolínea
label-passengers = { $count ->
    [one] Pasajero
   *[other] Pasajeros
}
nights = { $count ->
    [one] { $count } noche
   *[other] { $count } noches
}
adults = { $count ->
    [one] { $count } adulto
   *[other] { $count } adultos
}
children = { $count ->
    [one] { $count } niño
   *[other] { $count } niños
}
instructions-title = Instrucciones de llegada

## Booking confirmation (hotel)
confirmation-subject = Tu estancia en { $hotel } está confirmada
confirmation-heading = Tu estancia está confirmada
confirmation-intro = Gracias por reservar con { $brand }. Tu estancia en { $hotel } está confirmada.
confirmation-hcn-known = Muestra el número de confirmación del hotel en recepción al llegar y ten a mano tu ID de reserva si nos contactas.
confirmation-hcn-later = El número de confirmación propio del hotel suele llegar en otro correo unos días antes de tu llegada. Ten a mano tu ID de reserva si nos contactas.
confirmation-closing = Esperamos que disfrutes del viaje.

## Hotel confirmation number
hcn-subject = Tu número de confirmación de { $hotel }
hcn-heading = Tu número de confirmación del hotel
hcn-intro = { $hotel } ha confirmado tu reserva en su propio sistema. Tu número de confirmación del hotel es:
hcn-intro-text = { $hotel } ha confirmado tu reserva en su propio sistema.
hcn-line = Tu número de confirmación del hotel: { $number }
hcn-show = Muestra este número en recepción al llegar: es como el hotel encuentra tu reserva.
hcn-booking-id = Tu ID de reserva con { $brand } sigue siendo { $id }. Tenlo a mano si nos contactas.

## Arrival guide
arrival-subject = Tu estancia en { $hotel } empieza en 3 días
arrival-heading = Tu estancia empieza en 3 días
arrival-intro = Tu estancia en { $hotel } empieza el { $date }. Aquí tienes todo lo necesario para tu llegada.
arrival-before-title = Antes de salir
arrival-bring-id = Un documento de identidad con foto o el pasaporte para el registro
arrival-bring-card = Una tarjeta de pago para los extras: muchos hoteles retienen un depósito a la llegada
arrival-bring-booking-id = Tu ID de reserva
arrival-bring-both = Tu ID de reserva y el número de confirmación del hotel
arrival-late = Si cambian tus planes o vas a llegar tarde, responde a este correo.
arrival-closing = ¡Buen viaje!

## Check-in day
checkin-subject = Hoy: entrada en { $hotel }
checkin-heading = Hoy es el día de entrada
checkin-intro = Hoy llegas a { $hotel }. Te deseamos un buen viaje.
checkin-ready = Ten preparados tu documento de identidad y una tarjeta de pago en recepción. Si te retrasas, responde a este correo y avisaremos al hotel.

## Thank you
thanks-subject = Gracias por alojarte en { $hotel }
thanks-heading = Gracias
thanks-intro = Gracias por alojarte en { $hotel }. Esperamos que lo hayas pasado de maravilla y que tengas un buen regreso a casa.
thanks-reply = Si algo de tu estancia necesita nuestra atención, simplemente responde a este correo.
thanks-regards = Un cordial saludo,

## Booking updated
updated-subject = Tu reserva en { $hotel } se ha actualizado
updated-heading = Tu reserva se ha actualizado
updated-intro = Tu reserva en { $hotel } se ha actualizado.
updated-what-changed = Esto es lo que ha cambiado:
updated-before = Antes
updated-now = Ahora
updated-current = Tu reserva ahora
updated-unexpected = Si este cambio no es lo que esperabas, responde a este correo indicando tu ID de reserva.
field-hotel-id = Código del hotel
field-hotel-name = Hotel
field-checkin = Entrada
field-checkout = Salida
field-room-name = Habitación { $n }
field-room-board = Régimen, habitación { $n }
field-room-adults = Adultos, habitación { $n }
field-room-children = Niños, habitación { $n }
field-guests = Huéspedes
field-holder = Reserva a nombre de
field-hotel-confirmation-number = Número de confirmación del hotel
field-segment-flight-number = Número de vuelo, vuelo { $n }
field-segment-origin = Origen, vuelo { $n }
field-segment-destination = Destino, vuelo { $n }
field-segment-departure = Salida, vuelo { $n }
field-segment-arrival = Llegada, vuelo { $n }
field-passengers = Pasajeros

## Flights
flight-subject = Tu vuelo { $from } → { $to } está confirmado
flight-heading = Tu vuelo está confirmado
flight-intro = Gracias por reservar con { $brand }. Tu vuelo de { $from } a { $to } está confirmado.
flight-list-title = { $count ->
    [one] Tu vuelo
   *[other] Tus vuelos
}
flight-number = Vuelo { $number }
flight-departs = Salida
flight-arrives = Llegada
flight-local-times = Todas las horas son locales del aeropuerto correspondiente.
flight-checkin-pnr = Usa el localizador de la aerolínea para facturar con ella.
flight-rules = Consulta las normas de facturación y equipaje de la aerolínea antes de viajar, y comprueba que los nombres de los pasajeros coinciden con sus documentos de viaje.
flight-closing = Te deseamos un buen vuelo.
flight-changed-subject = Importante: ha cambiado el horario de tu vuelo
flight-changed-heading = Ha cambiado el horario de tu vuelo
flight-changed-intro = La aerolínea ha cambiado el horario de tu reserva de vuelo. Consulta los nuevos horarios a continuación.
flight-changed-intro-pnr = La aerolínea ha cambiado el horario de tu reserva de vuelo { $pnr }. Consulta los nuevos horarios a continuación.
flight-changed-new = Nuevo horario
flight-changed-previous = Horario anterior
flight-changed-todo = Qué hacer
flight-changed-reply = Responde a este correo para aceptar el nuevo horario. Si los nuevos horarios no te convienen, escríbenos respondiendo a este correo y veremos contigo las alternativas.
flight-booking-title = Reserva de vuelo { $id }

## Cancellation
cancelled-subject = Tu reserva { $id } está cancelada
cancelled-heading = Tu reserva está cancelada
cancelled-intro = Tu reserva { $id } ha sido cancelada.
cancelled-fee = Gastos de cancelación
cancelled-refund = Importe del reembolso
cancelled-fee-applies = Esta reserva tiene gastos de cancelación.
cancelled-questions = Si no esperabas esta cancelación o tienes alguna pregunta, responde a este correo indicando tu ID de reserva.

## Booking not confirmed
notice-title-cancelled = Tu reserva ha sido cancelada
notice-title-not-confirmed = No hemos podido confirmar tu reserva
notice-cancelled = Lo sentimos: tu reserva ha sido cancelada. El proveedor no ha podido mantenerla, así que no viajes basándote en la confirmación que te enviamos.
notice-cancelled-trip = Lo sentimos: tu reserva de { $trip } ha sido cancelada. El proveedor no ha podido mantenerla, así que no viajes basándote en la confirmación que te enviamos.
notice-not-confirmed = Lo sentimos: no hemos podido confirmar tu reserva. El proveedor no pudo completarla, así que no hay ninguna reserva a tu nombre.
notice-not-confirmed-trip = Lo sentimos: no hemos podido confirmar tu reserva de { $trip }. El proveedor no pudo completarla, así que no hay ninguna reserva a tu nombre.
notice-book-again = Si aún quieres viajar, puedes volver a reservar; los precios y la disponibilidad pueden haber cambiado. Si tienes alguna pregunta, simplemente responde a este correo.
refund-not-charged = No se te ha cobrado nada.
refund-unknown = Si se cobró algún pago por esta reserva, se reembolsará íntegramente; te escribiremos si necesitamos algo de ti.
refund-refunding = Tu pago se está reembolsando en la tarjeta con la que pagaste. Los reembolsos suelen tardar de 5 a 10 días hábiles en aparecer en tu extracto.
refund-refunding-amount = Tu pago de { $amount } se está reembolsando en la tarjeta con la que pagaste. Los reembolsos suelen tardar de 5 a 10 días hábiles en aparecer en tu extracto.
refund-refunded = Tu pago se ha reembolsado en la tarjeta con la que pagaste. Suele tardar de 5 a 10 días hábiles en aparecer en tu extracto.
refund-refunded-amount = Tu pago de { $amount } se ha reembolsado en la tarjeta con la que pagaste. Suele tardar de 5 a 10 días hábiles en aparecer en tu extracto.
refund-arranging = Estamos gestionando tu reembolso y te lo confirmaremos por correo en cuanto se haya realizado.

## Unfinished checkout
checkout-trip-stay = tu estancia, { $dates }
checkout-subject = Tu reserva no se completó: no se ha cobrado nada
checkout-heading = Tu reserva no se completó
checkout-intro = Empezaste una reserva con { $brand }, pero no se completó y no se ha cobrado nada.
checkout-intro-trip = Empezaste una reserva con { $brand } para { $trip }, pero no se completó y no se ha cobrado nada.
checkout-reasons = Si has cambiado de idea, no tienes que hacer nada. Si querías reservar, estos son los dos motivos más habituales por los que no se completa un pago con tarjeta, y cómo solucionar cada uno:
checkout-retry = Vuelve a intentar tu reserva
checkout-retry-prices = Los precios y la disponibilidad pueden cambiar, así que compruébalos de nuevo al volver a intentarlo. Si ha fallado otra cosa, simplemente responde a este correo.
declined-funds-subject = Tu pago no se completó: fondos o crédito insuficientes
declined-security-subject = Tu pago fue detenido por un control de seguridad
declined-intro = Tu reserva con { $brand } no se completó y no se ha cobrado nada. Hemos revisado el pago y esto es lo que lo detuvo:
declined-intro-trip = Tu reserva con { $brand } para { $trip } no se completó y no se ha cobrado nada. Hemos revisado el pago y esto es lo que lo detuvo:
declined-questions = Los precios y la disponibilidad pueden cambiar, así que compruébalos de nuevo al volver a intentarlo. Si tienes alguna pregunta, simplemente responde a este correo.
fix-funds-title = Fondos o crédito disponible insuficientes
fix-funds-why = Puede que el saldo o el límite de crédito de la tarjeta no cubra el importe total de la estancia, o que se haya alcanzado un límite de gasto diario.
fix-funds-how = Cómo solucionarlo: usa otra tarjeta o pide a tu banco que amplíe el límite o traspase fondos a esta tarjeta, y vuelve a intentarlo.
fix-security-title = Un control de seguridad del emisor de tu tarjeta o del procesador de pagos
fix-security-why = Los bancos y los procesadores de pagos a veces detienen un pago que les parece inusual, por ejemplo un importe mayor, un pago en el extranjero o una primera compra en una tienda nueva. Es para protegerte y no dice nada malo de ti.
fix-security-how = Cómo solucionarlo: aprueba el pago en la app de tu banco o llama al número que figura en el reverso de tu tarjeta y di que quieres hacer este pago; después, vuelve a intentarlo.

## Marketing footer and unsubscribe pages
marketing-footer = Este es un correo de marketing de { $brand }.
marketing-unsubscribe-link = Darse de baja de los correos de marketing
marketing-unsubscribe-one-click = con un solo clic.
marketing-unsubscribe-text = Darse de baja de los correos de marketing con un solo clic: { $url }
marketing-bookings-still = Seguirás recibiendo los correos sobre tus reservas.
unsubscribe-title = Darse de baja de los correos de marketing
unsubscribe-question = ¿Darse de baja de los correos de marketing?
unsubscribe-who = { $email } dejará de recibir correos de marketing de { $brand }.
unsubscribe-bookings-still = Seguirás recibiendo los correos sobre tus reservas (confirmaciones, cambios, datos de llegada).
unsubscribe-button = Darme de baja
unsubscribe-nothing-yet = Abrir esta página no ha cambiado nada.
unsubscribe-retry-title = Inténtalo de nuevo más tarde
unsubscribe-retry = No hemos podido atender tu solicitud en este momento. No se ha cambiado nada.
unsubscribe-invalid-title = Este enlace para darse de baja no es válido
unsubscribe-invalid-cut = Puede que se haya cortado o alterado. Vuelve a abrir el enlace desde el correo o cópialo entero. No se ha cambiado nada.
unsubscribe-invalid-list = No es un enlace para darse de baja de los correos de marketing. No se ha cambiado nada.
unsubscribe-post-title = No se ha cambiado nada
unsubscribe-post-only = Una solicitud de baja debe ser un POST con el cuerpo List-Unsubscribe=One-Click (RFC 8058). Usa el botón de la página para darse de baja.
unsubscribe-done-title = Te has dado de baja
unsubscribe-done = { $email } dejará de recibir correos de marketing. Seguirás recibiendo los correos sobre tus reservas.
unsubscribe-done-brand = { $email } dejará de recibir correos de marketing de { $brand }. Seguirás recibiendo los correos sobre tus reservas.

## The owner's answer to a guest's message (the owner's own words go between these)
answer-subject = Sobre su reserva { $ref }
answer-about = Su reserva { $ref }
answer-reply = Para escribirnos de nuevo, basta con responder a este correo.

## Board types
board-room-only = Solo alojamiento
board-breakfast = Desayuno incluido
board-half-board = Media pensión
board-full-board = Pensión completa
board-all-inclusive = Todo incluido

## The calendar attachment
calendar-note-add = { $count ->
    [one] El archivo de calendario adjunto añade esta reserva a tu calendario. Nuestros próximos correos lo actualizarán y, si se cancela, lo eliminarán.
   *[other] Los archivos de calendario adjuntos añaden cada vuelo a tu calendario. Nuestros próximos correos los actualizarán y, si se cancela, los eliminarán.
}
calendar-note-cancel = { $count ->
    [one] El archivo de calendario adjunto elimina de tu calendario la reserva cancelada.
   *[other] Los archivos de calendario adjuntos eliminan de tu calendario los vuelos cancelados.
}
calendar-note-update-remove = Los archivos de calendario adjuntos actualizan tus vuelos en tu calendario y eliminan los vuelos que ya no existen.
